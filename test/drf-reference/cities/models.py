from django.db import models

NAME_FIELDS = [
    'name_ar', 'name_en', 'name_ch', 'name_fr', 'name_ur', 'name_fa', 'name_sp', 'name_de',
    'name_it', 'name_uk', 'name_hi', 'name_id', 'name_ru', 'name_pt', 'name_ms', 'name_tr',
]


class City(models.Model):
    id = models.BigAutoField(primary_key=True)
    longitude = models.DecimalField(max_digits=9, decimal_places=6, null=True)
    latitude = models.DecimalField(max_digits=9, decimal_places=6, null=True)
    top = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = 'cities'


for _field in NAME_FIELDS:
    City.add_to_class(_field, models.CharField(max_length=255))
