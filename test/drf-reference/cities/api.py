"""The reference service as test/fixtures/conformance/README.md describes it: stock DRF 3.14 classes."""
from django.urls import path
from rest_framework import filters, generics, pagination, renderers, serializers

from .models import NAME_FIELDS, City

FIELDS = ['id', *NAME_FIELDS, 'longitude', 'latitude', 'top', 'created_at', 'updated_at']


class UtcMicroseconds(serializers.DateTimeField):
    """Six fractional digits and a Z, always (the kit's rule; isoformat() would drop a zero fraction)."""

    def to_representation(self, value):
        return self.enforce_timezone(value).isoformat(timespec='microseconds').replace('+00:00', 'Z')


class CitySerializer(serializers.ModelSerializer):
    created_at = UtcMicroseconds(read_only=True)
    updated_at = UtcMicroseconds(read_only=True)

    class Meta:
        model = City
        fields = FIELDS


class Pagination(pagination.PageNumberPagination):
    page_size = 10
    page_size_query_param = 'page_size'


class IdTieBreak(filters.OrderingFilter):
    """OrderingFilter, with ties broken by id ascending (the kit's rule)."""

    def filter_queryset(self, request, queryset, view):
        return queryset.order_by(*self.get_ordering(request, queryset, view), 'id')


class CityList(generics.ListCreateAPIView):
    queryset = City.objects.all()
    serializer_class = CitySerializer
    pagination_class = Pagination
    filter_backends = [IdTieBreak]
    ordering_fields = NAME_FIELDS
    ordering = ['-top', 'name_en']
    renderer_classes = [renderers.JSONRenderer, renderers.BrowsableAPIRenderer]


urlpatterns = [path('cities/', CityList.as_view())]
